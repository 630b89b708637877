"""The official Azure Tables Python SDK's own loops, timed, for the `tables` CLI's
bench (tables-cli/benches/cli_throughput.rs): reading a table with list_entities,
and writing rows in entity group transactions of 100 with submit_transaction.

    python throughput.py "<connection string>" list <table>
    python throughput.py "<connection string>" batch <table> <rows>

Prints one JSON line: {"rows": n, "seconds": s}.
"""

import json
import sys
import time

from azure.data.tables import TableClient

connection, mode, table = sys.argv[1], sys.argv[2], sys.argv[3]
client = TableClient.from_connection_string(connection, table_name=table)

start = time.monotonic()
rows = 0
if mode == "list":
    for _entity in client.list_entities(results_per_page=1000):
        rows += 1
elif mode == "batch":
    total = int(sys.argv[4])
    client.create_table()
    # The same narrow rows as the bench's: 1,000 to a partition, in order.
    for start_at in range(0, total, 100):
        operations = []
        for i in range(start_at, min(start_at + 100, total)):
            entity = {
                "PartitionKey": f"p{i // 1000:05}",
                "RowKey": f"{i:08}",
                "Name": f"name {i}",
                "Age": i % 2_000_000_000,
                "Score": i / 3.0,
                "Active": i % 2 == 0,
            }
            operations.append(("create", entity))
        client.submit_transaction(operations)
        rows += len(operations)
else:
    raise SystemExit(f"unknown mode {mode}")
print(json.dumps({"rows": rows, "seconds": time.monotonic() - start}))
