"""The legacy Python table SDK (azure-cosmosdb-table 1.0.6, pinned with hashes in
requirements.txt) against a table endpoint: tables, every write mode with ETags, a
batch that succeeds and one with a failing operation (nothing applied), a paged
query, a table SAS with key ranges, Edm values at their extremes read back exactly.
Prints `ok <n> checks`; exits 1 at the first failed check.

    .venv/bin/python drive.py "<connection string>" <table-name prefix>
"""

import datetime
import re
import sys
import time
import uuid

from azure.common import AzureHttpError
from azure.cosmosdb.table.common.retry import no_retry
from azure.cosmosdb.table.models import EdmType, Entity, EntityProperty, TablePermissions
from azure.cosmosdb.table.tablebatch import TableBatch
from azure.cosmosdb.table.tableservice import TableService

CHECKS = 0


def check(condition, what):
    global CHECKS
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)
    CHECKS += 1


def status_of(call):
    """The HTTP status `call` fails with, or None when it succeeds."""
    try:
        call()
    except AzureHttpError as err:
        return err.status_code
    return None


def entity(pk, rk, **properties):
    row = Entity()
    row.PartitionKey = pk
    row.RowKey = rk
    for name, value in properties.items():
        setattr(row, name, value)
    return row


def tables(service, table, prefix):
    check(service.create_table(table, fail_on_exist=True), "create_table")
    check(status_of(lambda: service.create_table(table, fail_on_exist=True)) == 409,
          "creating a table twice is 409")
    check(service.exists(table), "exists sees the new table")
    names = [t.name for t in service.list_tables()]
    check(table in names, "list_tables lists it")


def write_modes(service, table):
    etag1 = service.insert_entity(table, entity("p", "w", N=1))
    check(etag1.startswith('W/"datetime\''), f"insert answers a weak ETag ({etag1})")
    check(status_of(lambda: service.insert_entity(table, entity("p", "w", N=1))) == 409,
          "inserting an existing entity is 409")
    etag2 = service.update_entity(table, entity("p", "w", N=2), if_match=etag1)
    check(etag2 != etag1, "an update changes the ETag")
    check(status_of(lambda: service.update_entity(table, entity("p", "w", N=3), if_match=etag1))
          == 412, "an update with a stale ETag is 412")
    service.merge_entity(table, entity("p", "w", M="m"))
    read = service.get_entity(table, "p", "w")
    check(read.N == 2 and read.M == "m", "merge keeps N and adds M")
    check(read.etag != etag2, "the read ETag is the merge's")
    service.insert_or_replace_entity(table, entity("p", "w", R=True))
    read = service.get_entity(table, "p", "w")
    check(not hasattr(read, "N") and read.R is True, "insert_or_replace replaces")
    service.insert_or_merge_entity(table, entity("p", "w", S="s"))
    read = service.get_entity(table, "p", "w")
    check(read.R is True and read.S == "s", "insert_or_merge merges")
    service.insert_or_merge_entity(table, entity("p", "new", S="n"))
    check(service.get_entity(table, "p", "new").S == "n",
          "insert_or_merge of a missing entity inserts it")
    check(status_of(lambda: service.delete_entity(table, "p", "w", if_match=etag1)) == 412,
          "a stale delete is 412")
    service.delete_entity(table, "p", "w")
    check(status_of(lambda: service.get_entity(table, "p", "w")) == 404,
          "a deleted entity reads 404")
    check(status_of(lambda: service.merge_entity(table, entity("p", "w", M="m"))) == 404,
          "merging a missing entity is 404")


def batches(service, table):
    batch = TableBatch()
    for i in range(5):
        batch.insert_entity(entity("b", f"r{i}", I=i))
    batch.insert_or_replace_entity(entity("b", "u", I=9))
    etags = service.commit_batch(table, batch)
    check(len(etags) == 6, "a batch answers one result per operation")
    check(all(e and e.startswith('W/"') for e in etags), "each operation's ETag comes back")
    failing = TableBatch()
    failing.insert_entity(entity("b", "x1", I=1))
    failing.merge_entity(entity("b", "r0", J=1))
    failing.insert_entity(entity("b", "r1", I=1))
    check(status_of(lambda: service.commit_batch(table, failing)) == 409,
          "a batch with a conflicting insert fails with 409")
    check(status_of(lambda: service.get_entity(table, "b", "x1")) == 404,
          "nothing of the failed batch applied")
    check(not hasattr(service.get_entity(table, "b", "r0"), "J"),
          "the failed batch's merge did not apply")


def paging(service, table):
    rows = 23
    for start in range(0, rows, 10):
        batch = TableBatch()
        for i in range(start, min(rows, start + 10)):
            batch.insert_entity(entity("page", f"r{i:03}"))
        service.commit_batch(table, batch)
    seen, marker, pages = [], None, 0
    while True:
        page = service.query_entities(table, filter="PartitionKey eq 'page'", num_results=5,
                                      marker=marker)
        got = [e.RowKey for e in page]
        check(len(got) <= 5, "a page holds at most num_results rows")
        seen.extend(got)
        pages += 1
        marker = page.next_marker
        if not marker:
            break
    check(pages >= 5, f"23 rows in pages of 5 take 5 pages ({pages})")
    check(len(seen) == rows and len(set(seen)) == rows, "every row once across the pages")
    check(seen == sorted(seen), "rows in key order")
    selected = list(service.query_entities(
        table, filter="PartitionKey eq 'page' and RowKey ge 'r020'", select="RowKey"))
    check(len(selected) == 3, "a filter on both keys selects 3 rows")


def sas(service, table, endpoint):
    for pk in ("a", "m", "z"):
        service.insert_entity(table, entity(pk, "k"))
    now = datetime.datetime.now(datetime.timezone.utc)
    token = service.generate_table_shared_access_signature(
        table,
        permission=TablePermissions(query=True, add=True),
        start=now - datetime.timedelta(minutes=5),
        expiry=now + datetime.timedelta(hours=1),
        start_pk="b",
        end_pk="n",
    )
    limited = TableService(
        connection_string=f"TableEndpoint={endpoint};SharedAccessSignature={token}")
    limited.retry = no_retry
    check(limited.get_entity(table, "m", "k").PartitionKey == "m",
          "the SAS reads a partition inside its range")
    check(status_of(lambda: limited.get_entity(table, "z", "k")) == 403,
          "the SAS refuses a partition outside its range")
    partitions = [e.PartitionKey for e in limited.query_entities(table)]
    check("m" in partitions and "a" not in partitions and "z" not in partitions,
          f"a query through the SAS answers its range only ({partitions})")
    check(status_of(lambda: limited.insert_entity(table, entity("c", "k"))) is None,
          "the SAS inserts inside its range")
    check(status_of(lambda: limited.insert_entity(table, entity("x", "k"))) == 403,
          "the SAS refuses an insert outside its range")
    check(status_of(lambda: limited.delete_entity(table, "m", "k")) == 403,
          "the SAS refuses a delete it doesn't grant")


def extremes(service, table):
    # The SDK writes DateTime to the second (its _to_utc_datetime): the extremes
    # of the range at that precision.
    late = datetime.datetime(9999, 12, 31, 23, 59, 59, tzinfo=datetime.timezone.utc)
    early = datetime.datetime(1601, 1, 1, 0, 0, 1, tzinfo=datetime.timezone.utc)
    guid = uuid.UUID("c9da6455-213d-42c9-9a79-3e9149a57833")
    data = bytes([0, 1, 2, 253, 254, 255])
    text = "Grüße, 世界 🌍 'quoted' \"double\""
    row = entity(
        "edm", "extremes",
        I32Max=EntityProperty(EdmType.INT32, 2147483647),
        I32Min=EntityProperty(EdmType.INT32, -2147483648),
        I64Max=EntityProperty(EdmType.INT64, 9223372036854775807),
        I64Min=EntityProperty(EdmType.INT64, -9223372036854775808),
        I64Odd=EntityProperty(EdmType.INT64, 9007199254740993),
        DMax=EntityProperty(EdmType.DOUBLE, 1.7976931348623157e308),
        DTiny=EntityProperty(EdmType.DOUBLE, 5e-324),
        DNegZero=EntityProperty(EdmType.DOUBLE, -0.0),
        Late=EntityProperty(EdmType.DATETIME, late),
        Early=EntityProperty(EdmType.DATETIME, early),
        Id=EntityProperty(EdmType.GUID, guid),
        Bytes=EntityProperty(EdmType.BINARY, data),
        Empty=EntityProperty(EdmType.BINARY, b""),
        Yes=True,
        No=False,
        Text=text,
        Blank="",
    )
    service.insert_entity(table, row)
    read = service.get_entity(table, "edm", "extremes")

    def value(name):
        v = getattr(read, name)
        return v.value if isinstance(v, EntityProperty) else v

    check(value("I32Max") == 2147483647 and value("I32Min") == -2147483648, "Int32 extremes")
    check(value("I64Max") == 9223372036854775807, f"Int64 max ({value('I64Max')})")
    check(value("I64Min") == -9223372036854775808, "Int64 min")
    check(value("I64Odd") == 9007199254740993, "an Int64 beyond 2^53 exactly")
    check(value("DMax") == 1.7976931348623157e308, "Double max")
    check(value("DTiny") == 5e-324, "the smallest subnormal Double")
    neg_zero = value("DNegZero")
    check(neg_zero == 0.0 and str(neg_zero) == "-0.0", f"Double -0.0 keeps its sign ({neg_zero})")
    check(value("Late") == late, f"DateTime 9999 ({value('Late')})")
    check(value("Early") == early, f"DateTime 1601 ({value('Early')})")
    check(str(value("Id")) == str(guid), f"Guid ({value('Id')!r})")
    check(value("Bytes") == data, "Binary bytes exactly")
    check(value("Empty") == b"", "an empty Binary")
    check(value("Yes") is True and value("No") is False, "Booleans")
    check(value("Text") == text, "a string of every script")
    check(value("Blank") == "", "an empty string")
    found = list(service.query_entities(
        table, filter="I64Max eq 9223372036854775807L and Yes eq true"))
    check(len(found) == 1, "an Int64 and Boolean filter finds the row")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    connection, prefix = sys.argv[1:]
    endpoint = re.search(r"TableEndpoint=([^;]+)", connection).group(1)
    service = TableService(connection_string=connection)
    # The SDK retries a failed batch three times with backoff (about a minute): it
    # counts an error parsed from a 202 answer as a failed download, against Azure
    # too (its ExponentialRetry._should_retry). The checks want the first answer.
    service.retry = no_retry
    table = f"{prefix}pylegacy{int(time.time() * 1000) % 100000}"
    tables(service, table, prefix)
    write_modes(service, table)
    batches(service, table)
    paging(service, table)
    sas(service, table, endpoint)
    extremes(service, table)
    check(service.delete_table(table), "delete_table")
    check(not service.exists(table), "a deleted table no longer exists")
    print(f"ok {CHECKS} checks")


if __name__ == "__main__":
    main()
