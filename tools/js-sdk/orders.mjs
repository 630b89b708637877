// Writes orders with the official Azure Tables JS SDK (pinned in package.json) as a
// JS program writes plain JS values: whole numbers go out without a type, so the
// service stores them as Edm.Int32, fractions as Edm.Double, and only values given
// an explicit type are Int64. The Rust tests read them back through typed filters
// (tests/tests/foreign_orders.rs) and the existing_table example carries them.
//
//   node orders.mjs <connection-string> <table>
import { TableClient } from "@azure/data-tables";

const [connection, table] = process.argv.slice(2);
if (!connection || !table) {
  console.error("usage: node orders.mjs <connection-string> <table>");
  process.exit(2);
}
const client = TableClient.fromConnectionString(connection, table, {
  allowInsecureConnection: true,
});

const int64 = (value) => ({ value: String(value), type: "Int64" });
const double = (value) => ({ value: String(value), type: "Double" });

// Items in one column as Int32 and Int64; Total as Int32, Double and a whole Double;
// Channel, Coupon: columns the Rust type does not declare.
const orders = [
  { rowKey: "js-001", Items: 3, Total: 150, Channel: "web" },
  { rowKey: "js-002", Items: 0, Total: 99.5, Channel: "web" },
  { rowKey: "js-003", Items: int64(12), Total: 250.25, Coupon: "SPRING" },
  { rowKey: "js-004", Items: 7, Total: double(100), Channel: "app" },
  { rowKey: "js-005", Items: int64(3000000000), Total: 100, Channel: "app" },
  { rowKey: "js-006", Items: 1, Total: -0.5 },
];

try {
  await client.createTable();
} catch (e) {
  if (e.statusCode !== 409) throw e;
}
for (const order of orders) {
  await client.upsertEntity({ partitionKey: "orders", ...order }, "Replace");
}
console.log(`wrote ${orders.length} orders`);
