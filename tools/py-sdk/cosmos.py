"""The official Azure Tables Python SDK against an endpoint that plays Azure Cosmos
DB for Table (tables-server --profile cosmos), on the differences the service's FAQ
documents: a 256-byte RowKey refused, table names case-sensitive, no CORS (service
properties refused).

    python cosmos.py "<connection string>" <table prefix>

Prints one line per check, then "ok <n> checks"; exits non-zero on the first failed
check.
"""

import sys

from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.data.tables import TableClient, TableCorsRule, TableServiceClient

CHECKS = 0


def check(name, condition, detail=""):
    global CHECKS
    if not condition:
        print(f"FAILED {name} {detail}")
        sys.exit(1)
    CHECKS += 1
    print(f"ok - {name}")


def status(call):
    try:
        call()
        return 0
    except HttpResponseError as e:
        return e.status_code


def main():
    connection, prefix = sys.argv[1], sys.argv[2]
    service = TableServiceClient.from_connection_string(connection)

    keys = f"{prefix}Keys"
    service.create_table(keys)
    client = TableClient.from_connection_string(connection, keys)
    long = status(lambda: client.create_entity({"PartitionKey": "p", "RowKey": "r" * 256}))
    check("a 256-byte RowKey is refused with 400", long == 400, f"got {long}")
    fits = status(lambda: client.create_entity({"PartitionKey": "p", "RowKey": "r" * 255}))
    check("a 255-byte RowKey is accepted", fits == 0, f"got {fits}")

    upper, lower = f"{prefix}Case", f"{prefix}case"
    service.create_table(upper)
    second = status(lambda: service.create_table(lower))
    check("a table name in another case is another table", second == 0, f"got {second}")
    TableClient.from_connection_string(connection, upper).create_entity(
        {"PartitionKey": "p", "RowKey": "r", "N": 1}
    )
    try:
        TableClient.from_connection_string(connection, lower).get_entity("p", "r")
        found = True
    except ResourceNotFoundError:
        found = False
    check("the other case's table does not hold the row", not found)

    cors = TableCorsRule(["https://example.com"], ["GET"])
    refused = status(lambda: service.set_service_properties(cors=[cors]))
    check("CORS rules can't be set (405)", refused == 405, f"got {refused}")
    read = status(lambda: service.get_service_properties())
    check("service properties are not offered (405)", read == 405, f"got {read}")

    for name in (keys, upper, lower):
        service.delete_table(name)
    print(f"ok {CHECKS} checks")


if __name__ == "__main__":
    main()
