// Drives an endpoint that plays Azure Cosmos DB for Table (`tables-server --profile
// cosmos`) with the official Azure Tables JS SDK, on the differences the service's
// FAQ documents: a 256-byte RowKey refused, table names case-sensitive, no service
// properties or statistics. The Rust test `tests/tests/sdk_cosmos_profile.rs` runs it.
//
//   node cosmos.mjs <connection-string> <table-prefix>
//
// Prints `ok <n> checks`; exits 1 with what differed.
import { TableClient, TableServiceClient } from "@azure/data-tables";

const [connection, prefix] = process.argv.slice(2);
if (!connection || !prefix) {
  console.error("usage: node cosmos.mjs <connection-string> <table-prefix>");
  process.exit(2);
}
const options = { allowInsecureConnection: true };
const service = TableServiceClient.fromConnectionString(connection, options);
let checks = 0;

function check(condition, what) {
  checks += 1;
  if (!condition) throw new Error(`check failed: ${what}`);
}

async function status(promise) {
  try {
    await promise;
    return 0;
  } catch (e) {
    return e.statusCode ?? -1;
  }
}

try {
  const keys = `${prefix}Keys`;
  await service.createTable(keys);
  const client = TableClient.fromConnectionString(connection, keys, options);
  const long = await status(client.createEntity({ partitionKey: "p", rowKey: "r".repeat(256) }));
  check(long === 400, `a 256-byte RowKey is refused with 400, got ${long}`);
  const fits = await status(client.createEntity({ partitionKey: "p", rowKey: "r".repeat(255) }));
  check(fits === 0, `a 255-byte RowKey is accepted, got ${fits}`);

  const upper = `${prefix}Case`;
  const lower = `${prefix}case`;
  await service.createTable(upper);
  const second = await status(service.createTable(lower));
  check(second === 0, `a table name in another case is another table, got ${second}`);
  const upperClient = TableClient.fromConnectionString(connection, upper, options);
  const lowerClient = TableClient.fromConnectionString(connection, lower, options);
  await upperClient.createEntity({ partitionKey: "p", rowKey: "r", N: 1 });
  const missing = await status(lowerClient.getEntity("p", "r"));
  check(missing === 404, `the other case's table does not hold the row, got ${missing}`);

  const properties = await status(service.getProperties());
  check(properties === 405, `service properties are not offered (405), got ${properties}`);
  const stats = await status(service.getStatistics());
  check(stats === 405 || stats === -1, `service statistics are not offered, got ${stats}`);

  for (const name of [keys, upper, lower]) await service.deleteTable(name);
  console.log(`ok ${checks} checks`);
} catch (e) {
  console.error(e.message ?? e);
  process.exit(1);
}
