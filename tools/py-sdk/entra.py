"""The official Azure Tables Python SDK against tables-server --oauth over HTTPS,
with a token credential of its own: CRUD, a query, a reader's write refused. The
Rust test tests/tests/sdk_entra.rs runs it.

    python entra.py <account URL> <table> <writer token> <reader token> <CA file>

Prints one line per check, then "ok <n> checks"; exits non-zero on the first failed
check.
"""

import sys
import time

from azure.core.credentials import AccessToken
from azure.core.exceptions import HttpResponseError
from azure.data.tables import TableClient, TableServiceClient, UpdateMode

CHECKS = 0
SCOPES = []


def check(name, condition, detail=""):
    global CHECKS
    if not condition:
        print(f"FAILED {name} {detail}")
        sys.exit(1)
    CHECKS += 1
    print(f"ok - {name}")


class Fixed:
    """A token credential: what azure-identity's credentials are to the SDK."""

    def __init__(self, token):
        self.token = token

    def get_token(self, *scopes, **kwargs):
        SCOPES.extend(scopes)
        return AccessToken(self.token, int(time.time()) + 3600)


def main():
    url, table, writer_token, reader_token, ca = sys.argv[1:6]
    service = TableServiceClient(url, credential=Fixed(writer_token), connection_verify=ca)
    service.create_table(table)
    writer = TableClient(url, table, credential=Fixed(writer_token), connection_verify=ca)
    writer.create_entity({"PartitionKey": "p", "RowKey": "r1", "N": 1})
    writer.upsert_entity({"PartitionKey": "p", "RowKey": "r2", "N": 2}, mode=UpdateMode.REPLACE)
    writer.update_entity({"PartitionKey": "p", "RowKey": "r1", "N": 10}, mode=UpdateMode.MERGE)
    got = writer.get_entity("p", "r1")
    check("the merged row reads back", got["N"] == 10, got)
    rows = sorted(e["RowKey"] for e in writer.query_entities("N gt 1"))
    check("the query finds r1 and r2", rows == ["r1", "r2"], rows)
    writer.delete_entity("p", "r2")
    check(
        "the storage scope was asked",
        SCOPES and all(s == "https://storage.azure.com/.default" for s in SCOPES),
        SCOPES,
    )

    reader = TableClient(url, table, credential=Fixed(reader_token), connection_verify=ca)
    check("a reader reads", reader.get_entity("p", "r1")["N"] == 10)
    try:
        reader.create_entity({"PartitionKey": "p", "RowKey": "r3"})
        check("a reader's write is refused", False, "it was accepted")
    except HttpResponseError as e:
        check("a reader's write is refused with 403", e.status_code == 403, e.status_code)
        check(
            "as AuthorizationPermissionMismatch",
            "AuthorizationPermissionMismatch" in str(e),
            str(e)[:200],
        )
    service.delete_table(table)
    print(f"ok {CHECKS} checks")


if __name__ == "__main__":
    main()
