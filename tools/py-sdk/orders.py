"""Writes orders with the official Azure Tables Python SDK (azure-data-tables, pinned
in requirements.txt) as a Python program writes plain Python values: an int goes out
as Edm.Int32 (an int beyond it is refused unless typed Int64 explicitly), a float as
Edm.Double. The
Rust tests read them back through typed filters (tests/tests/foreign_orders.rs) and
the existing_table example carries them.

    python orders.py "<connection string>" <table>
"""

import sys

from azure.core.exceptions import ResourceExistsError
from azure.data.tables import EdmType, EntityProperty, TableClient

connection, table = sys.argv[1], sys.argv[2]
client = TableClient.from_connection_string(connection, table_name=table)
try:
    client.create_table()
except ResourceExistsError:
    pass

# Items as Int32 and (given explicitly) Int64; Total as Int32, Double and an Int64.
orders = [
    {"RowKey": "py-001", "Items": 25, "Total": 150, "Region": "EU"},
    {"RowKey": "py-002", "Items": EntityProperty(2, EdmType.INT64), "Total": 150.0},
    {"RowKey": "py-003", "Items": 0, "Total": 100.5, "Region": "US"},
    {"RowKey": "py-004", "Items": 5, "Total": EntityProperty(2**40, EdmType.INT64)},
    {"RowKey": "py-005", "Items": 1, "Total": -3, "Region": "EU"},
    {"RowKey": "py-006", "Items": 4, "Total": 100.0},
]
for order in orders:
    client.upsert_entity({"PartitionKey": "orders", **order})
print(f"wrote {len(orders)} orders")
