// Drives an endpoint with the official Azure Tables JS SDK (pinned in package.json)
// and checks every answer: the Rust test `tables-server/tests/js_sdk.rs` runs it
// against tables-server.
//
//   node drive.mjs <connection-string> <table-prefix>
//
// Prints one line per check group and `ok <n> checks`; exits 1 with what differed.
import {
  AzureNamedKeyCredential,
  AzureSASCredential,
  TableClient,
  TableServiceClient,
  TableTransaction,
  generateAccountSas,
  generateTableSas,
} from "@azure/data-tables";

const [connection, prefix] = process.argv.slice(2);
if (!connection || !prefix) {
  console.error("usage: node drive.mjs <connection-string> <table-prefix>");
  process.exit(2);
}
const options = { allowInsecureConnection: true };
const service = TableServiceClient.fromConnectionString(connection, options);
let checks = 0;

function check(condition, what) {
  checks += 1;
  if (!condition) throw new Error(`check failed: ${what}`);
}

function same(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  check(a === e, `${what}: expected ${e}, got ${a}`);
}

async function status(promise) {
  try {
    await promise;
    return 0;
  } catch (e) {
    return e.statusCode ?? -1;
  }
}

const tables = [];
async function table(name) {
  const full = `${prefix}${name}`;
  await service.createTable(full);
  tables.push(full);
  return TableClient.fromConnectionString(connection, full, options);
}

// Tables: create, list, delete, and the service's codes for the mistakes.
async function tablesGroup() {
  const client = await table("Tables");
  same(await status(service.createTable(`${prefix}Tables`)), 0, "createTable is idempotent in the SDK");
  same(await status(client.createTable()), 0, "TableClient.createTable ignores 409");
  const names = [];
  for await (const t of service.listTables({ queryOptions: { filter: `TableName eq '${prefix}Tables'` } })) {
    names.push(t.name);
  }
  same(names, [`${prefix}Tables`], "listTables with a filter");
  same(await status(service.createTable("1bad")), 400, "an invalid table name");
  same(await status(TableClient.fromConnectionString(connection, `${prefix}Missing`, options).getEntity("p", "r")), 404, "a missing table");
  console.log("tables ok");
}

// Every write mode, with ETags.
async function crudGroup() {
  const client = await table("Crud");
  const created = await client.createEntity({ partitionKey: "p", rowKey: "r", A: "one", B: 1 });
  check(created.etag && created.etag.startsWith('W/"'), "createEntity returns an ETag");
  same(await status(client.createEntity({ partitionKey: "p", rowKey: "r" })), 409, "insert of an existing key");

  let got = await client.getEntity("p", "r");
  same([got.A, got.B], ["one", 1], "getEntity");

  await client.updateEntity({ partitionKey: "p", rowKey: "r", A: "two" }, "Replace", { etag: got.etag });
  got = await client.getEntity("p", "r");
  same([got.A, got.B], ["two", undefined], "updateEntity Replace drops the other properties");
  same(await status(client.updateEntity({ partitionKey: "p", rowKey: "r", A: "x" }, "Replace", { etag: created.etag })), 412, "a stale ETag");

  await client.updateEntity({ partitionKey: "p", rowKey: "r", C: 3 }, "Merge", { etag: got.etag });
  got = await client.getEntity("p", "r");
  same([got.A, got.C], ["two", 3], "updateEntity Merge keeps the others");

  await client.upsertEntity({ partitionKey: "p", rowKey: "r2", A: "new" }, "Replace");
  await client.upsertEntity({ partitionKey: "p", rowKey: "r2", D: true }, "Merge");
  got = await client.getEntity("p", "r2");
  same([got.A, got.D], ["new", true], "upsertEntity Replace then Merge");
  await client.upsertEntity({ partitionKey: "p", rowKey: "r2", E: 5 }, "Replace");
  got = await client.getEntity("p", "r2");
  same([got.A, got.E], [undefined, 5], "upsertEntity Replace replaces");

  same(await status(client.updateEntity({ partitionKey: "p", rowKey: "absent" }, "Merge")), 404, "merge of an absent entity");
  await client.deleteEntity("p", "r2");
  same(await status(client.getEntity("p", "r2")), 404, "a deleted entity");
  same(await status(client.deleteEntity("p", "r2")), 404, "delete of an absent entity");
  const stale = (await client.getEntity("p", "r")).etag;
  await client.updateEntity({ partitionKey: "p", rowKey: "r", A: "three" }, "Merge");
  same(await status(client.deleteEntity("p", "r", { etag: stale })), 412, "delete with a stale ETag");

  // Keys with characters a URL must escape.
  const odd = { partitionKey: "o'hara / é", rowKey: "a b%c#?" };
  same(await status(client.createEntity({ ...odd, V: 1 })), 400, "a key with / # ? is refused");
  const fine = { partitionKey: "o'hara é 中", rowKey: "a b%c+&=" };
  await client.createEntity({ ...fine, V: 1 });
  got = await client.getEntity(fine.partitionKey, fine.rowKey);
  same([got.partitionKey, got.rowKey, got.V], [fine.partitionKey, fine.rowKey, 1], "escaped keys");
  console.log("crud ok");
}

// Every Edm type at its extremes, read back exactly (as the wire carries it).
async function typesGroup() {
  const client = await table("Types");
  const entity = {
    partitionKey: "types",
    rowKey: "extremes",
    Int32Min: { value: "-2147483648", type: "Int32" },
    Int32Max: 2147483647,
    Int64Min: { value: "-9223372036854775808", type: "Int64" },
    Int64Max: { value: "9223372036854775807", type: "Int64" },
    DoubleMax: { value: "1.7976931348623157e308", type: "Double" },
    DoubleTiny: { value: "5e-324", type: "Double" },
    DoubleNaN: { value: "NaN", type: "Double" },
    DoubleInf: { value: "Infinity", type: "Double" },
    DoubleNegInf: { value: "-Infinity", type: "Double" },
    DoubleHalf: 0.5,
    True: true,
    False: false,
    DateMin: { value: "1601-01-01T00:00:00.0000000Z", type: "DateTime" },
    DateMax: { value: "9999-12-31T23:59:59.9999999Z", type: "DateTime" },
    Guid: { value: "c9da6455-213d-42c9-9a79-3e9149a57833", type: "Guid" },
    Binary: new Uint8Array([0, 1, 254, 255]),
    Text: "é 中 🦀 \"quoted\" \\ \n",
    Empty: "",
  };
  await client.createEntity(entity);
  const raw = await client.getEntity("types", "extremes", { disableTypeConversion: true });
  const value = (name) => raw[name]?.value ?? raw[name];
  const type = (name) => raw[name]?.type;
  if (process.env.DRIVE_DEBUG) console.log(JSON.stringify(raw));
  same([value("Int32Min"), value("Int32Max")].map(Number), [-2147483648, 2147483647], "Int32 extremes");
  same([type("Int64Min"), value("Int64Min"), value("Int64Max")], ["Int64", "-9223372036854775808", "9223372036854775807"], "Int64 extremes");
  same(Number(value("DoubleMax")), 1.7976931348623157e308, "Double max");
  same(Number(value("DoubleTiny")), 5e-324, "Double min subnormal");
  same([value("DoubleNaN"), value("DoubleInf"), value("DoubleNegInf")], ["NaN", "Infinity", "-Infinity"], "Double specials");
  same(Number(value("DoubleHalf")), 0.5, "Double");
  same([type("True"), value("True"), value("False")], ["Boolean", "true", "false"], "Boolean");
  same([type("Int32Min"), type("DoubleHalf"), type("DoubleMax")], ["Int32", "Double", "Double"], "numeric types");
  same([type("DateMin"), value("DateMin"), value("DateMax")], ["DateTime", "1601-01-01T00:00:00.0000000Z", "9999-12-31T23:59:59.9999999Z"], "DateTime extremes, 100 ns");
  same([type("Guid"), value("Guid")], ["Guid", "c9da6455-213d-42c9-9a79-3e9149a57833"], "Guid");
  same([type("Binary"), value("Binary")], ["Binary", "AAH+/w=="], "Binary");
  same([value("Text"), value("Empty")], [entity.Text, ""], "String");
  const converted = await client.getEntity("types", "extremes");
  check(converted.Binary instanceof Uint8Array && converted.Binary.length === 4, "Binary as Uint8Array");
  check(converted.DateMin instanceof Date && converted.DateMin.getUTCFullYear() === 1601, "DateTime as Date");
  console.log("types ok");
}

// Batches: all applied, or one failure reported with its index and nothing applied.
async function batchGroup() {
  const client = await table("Batch");
  const tx = new TableTransaction();
  for (let i = 0; i < 5; i += 1) tx.createEntity({ partitionKey: "b", rowKey: `r${i}`, N: i });
  const result = await client.submitTransaction(tx.actions);
  same(result.status, 202, "a batch is answered 202");
  same(result.subResponses.length, 5, "one answer per operation");
  check(result.subResponses.every((r) => r.status === 204 && r.etag), "each insert answered 204 with an ETag");

  const mixed = new TableTransaction();
  mixed.updateEntity({ partitionKey: "b", rowKey: "r0", N: 100 }, "Merge");
  mixed.upsertEntity({ partitionKey: "b", rowKey: "r9", N: 9 }, "Replace");
  mixed.deleteEntity("b", "r1");
  await client.submitTransaction(mixed.actions);
  same((await client.getEntity("b", "r0")).N, 100, "batch merge");
  same((await client.getEntity("b", "r9")).N, 9, "batch upsert");
  same(await status(client.getEntity("b", "r1")), 404, "batch delete");

  const failing = new TableTransaction();
  failing.createEntity({ partitionKey: "b", rowKey: "new1" });
  failing.createEntity({ partitionKey: "b", rowKey: "r2" });
  failing.createEntity({ partitionKey: "b", rowKey: "new2" });
  let error;
  try {
    await client.submitTransaction(failing.actions);
  } catch (e) {
    error = e;
  }
  check(error !== undefined, "a batch with a failing operation fails");
  same(error.statusCode, 409, "its status is the failing operation's");
  check(/^1:/.test(error.message) || error.message.includes("1:"), `the message starts with the index: ${error.message}`);
  same(await status(client.getEntity("b", "new1")), 404, "nothing of a failed batch is applied");

  const cross = new TableTransaction();
  cross.createEntity({ partitionKey: "x", rowKey: "1" });
  cross.createEntity({ partitionKey: "y", rowKey: "1" });
  let crossError;
  try {
    await client.submitTransaction(cross.actions);
  } catch (e) {
    crossError = e;
  }
  check(crossError !== undefined, "a batch across partitions is refused");
  same(await status(client.getEntity("x", "1")), 404, "and nothing of it applied");
  console.log("batch ok");
}

// Paging: pages of a chosen size, continuation across partitions, $select, $filter.
async function pagingGroup() {
  const client = await table("Paging");
  for (const pk of ["a", "b", "c"]) {
    const tx = new TableTransaction();
    for (let i = 0; i < 7; i += 1) tx.createEntity({ partitionKey: pk, rowKey: `r${i}`, N: i, Extra: "x" });
    await client.submitTransaction(tx.actions);
  }
  const pages = [];
  for await (const page of client.listEntities().byPage({ maxPageSize: 4 })) {
    pages.push(page.map((e) => `${e.partitionKey}/${e.rowKey}`));
  }
  same(pages.map((p) => p.length), [4, 4, 4, 4, 4, 1], "pages of 4");
  const all = pages.flat();
  same(all.length, 21, "every row once");
  same([...all].sort(), all, "in key order");
  const selected = [];
  for await (const e of client.listEntities({ queryOptions: { filter: "PartitionKey eq 'b' and N ge 5", select: ["N"] } })) {
    selected.push([e.rowKey, e.N, e.Extra]);
  }
  same(selected, [[undefined, 5, undefined], [undefined, 6, undefined]], "$filter and $select");
  same(await status(client.listEntities({ queryOptions: { filter: "startswith(RowKey, 'r')" } }).next()), 400, "an unsupported filter");
  console.log("paging ok");
}

// The connection string's parts: the table endpoint and the account key.
function connectionPart(name) {
  const part = connection.split(";").find((p) => p.startsWith(`${name}=`));
  return part && part.slice(name.length + 1);
}
const endpoint = connectionPart("TableEndpoint");
const credential = new AzureNamedKeyCredential(connectionPart("AccountName"), connectionPart("AccountKey"));
const inAnHour = () => new Date(Date.now() + 3600 * 1000);

async function keys(client) {
  const seen = [];
  for await (const e of client.listEntities()) seen.push(`${e.partitionKey}/${e.rowKey}`);
  return seen;
}

// SAS: a table SAS with a key range and permissions, an account SAS, enforced by the server.
async function sasGroup() {
  const owner = await table("Sas");
  for (const pk of ["p1", "p2", "p3"]) {
    for (const rk of ["a", "b"]) await owner.createEntity({ partitionKey: pk, rowKey: rk, N: 1 });
  }
  const name = `${prefix}Sas`;
  const ranged = generateTableSas(name, credential, {
    permissions: { query: true, add: true },
    expiresOn: inAnHour(),
    startPartitionKey: "p2",
    startRowKey: "b",
    endPartitionKey: "p3",
    endRowKey: "a",
  });
  const reader = new TableClient(endpoint, name, new AzureSASCredential(ranged), options);
  same(await keys(reader), ["p2/b", "p3/a"], "a query answers the rows inside the key range only");
  same((await reader.getEntity("p2", "b")).N, 1, "a read inside the range");
  same(await status(reader.getEntity("p2", "a")), 403, "a read outside the range");
  same(await status(reader.getEntity("p1", "a")), 403, "a read of a partition outside the range");
  same(await status(reader.createEntity({ partitionKey: "p3", rowKey: "0" })), 0, "an insert inside the range");
  same(await status(reader.createEntity({ partitionKey: "p3", rowKey: "z" })), 403, "an insert outside the range");
  same(await status(reader.updateEntity({ partitionKey: "p2", rowKey: "b", N: 2 })), 403, "an update without the u permission");
  same(await status(reader.upsertEntity({ partitionKey: "p2", rowKey: "c" })), 403, "an upsert needs a and u");
  same(await status(reader.deleteEntity("p2", "b")), 403, "a delete without the d permission");
  same(await keys(owner), ["p1/a", "p1/b", "p2/a", "p2/b", "p3/0", "p3/a", "p3/b"], "only the allowed insert applied");
  const other = new TableClient(endpoint, `${prefix}Tables`, new AzureSASCredential(ranged), options);
  same(await status(other.getEntity("p2", "b")), 403, "the token is for its table only");
  const expired = generateTableSas(name, credential, { permissions: { query: true }, expiresOn: new Date(Date.now() - 60000) });
  same(await status(new TableClient(endpoint, name, new AzureSASCredential(expired), options).getEntity("p2", "b")), 403, "an expired token");
  const forged = ranged.replace(/sig=[^&]*/, "sig=AAAA");
  same(await status(new TableClient(endpoint, name, new AzureSASCredential(forged), options).getEntity("p2", "b")), 403, "a token with another signature");
  const lister = generateAccountSas(credential, { permissions: { list: true, query: true }, resourceTypes: "sco", services: { table: true }, expiresOn: inAnHour() });
  const sasService = new TableServiceClient(endpoint, new AzureSASCredential(lister), options);
  const listed = [];
  for await (const t of sasService.listTables({ queryOptions: { filter: `TableName eq '${name}'` } })) listed.push(t.name);
  same(listed, [name], "an account SAS with l lists tables");
  same(await status(sasService.createTable(`${prefix}SasMade`)), 403, "an account SAS without a, c or w creates no table");
  same((await keys(new TableClient(endpoint, name, new AzureSASCredential(lister), options))).length, 7, "an account SAS with r and o queries entities");
  const objectsOnly = generateAccountSas(credential, { permissions: { list: true }, resourceTypes: "o", services: { table: true }, expiresOn: inAnHour() });
  same(await status(new TableServiceClient(endpoint, new AzureSASCredential(objectsOnly), options).listTables().next()), 403, "listing tables needs resource type c");
  console.log("sas ok");
}

// Table ACLs: stored access policies, a SAS that names one, and revoking it.
async function aclGroup() {
  const owner = await table("Acl");
  await owner.createEntity({ partitionKey: "p", rowKey: "r", N: 7 });
  const expiry = new Date(Date.UTC(2031, 0, 1));
  await owner.setAccessPolicy([
    { id: "readers", accessPolicy: { permission: "r", expiry } },
    { id: "writers", accessPolicy: { permission: "raud", start: new Date(Date.UTC(2024, 0, 1)), expiry } },
  ]);
  const policies = await owner.getAccessPolicy();
  same(
    Array.from(policies).map((p) => [p.id, p.accessPolicy?.permission, p.accessPolicy?.expiry?.toISOString()]),
    [["readers", "r", "2031-01-01T00:00:00.000Z"], ["writers", "raud", "2031-01-01T00:00:00.000Z"]],
    "the policies read back",
  );
  const name = `${prefix}Acl`;
  const byPolicy = generateTableSas(name, credential, { identifier: "readers" });
  check(!/[?&]sp=/.test(`&${byPolicy}`) && !/[?&]se=/.test(`&${byPolicy}`), `the token takes sp and se from the policy: ${byPolicy.replace(/sig=[^&]*/, "sig=..")}`);
  const reader = new TableClient(endpoint, name, new AzureSASCredential(byPolicy), options);
  same((await reader.getEntity("p", "r")).N, 7, "a token naming the readers policy reads");
  same(await status(reader.createEntity({ partitionKey: "p", rowKey: "s" })), 403, "and may not insert");
  const unknown = generateTableSas(name, credential, { identifier: "nobody" });
  same(await status(new TableClient(endpoint, name, new AzureSASCredential(unknown), options).getEntity("p", "r")), 403, "a token naming a policy that is not set");
  same(await status(reader.getAccessPolicy()), 403, "a SAS may not read the ACL");
  await owner.setAccessPolicy([]);
  same(Array.from(await owner.getAccessPolicy()).length, 0, "an empty ACL");
  same(await status(reader.getEntity("p", "r")), 403, "removing the policy revokes its tokens");
  const six = [0, 1, 2, 3, 4, 5].map((i) => ({ id: `p${i}`, accessPolicy: { permission: "r", expiry } }));
  same(await status(owner.setAccessPolicy(six)), 400, "at most five policies");
  console.log("acl ok");
}

// Service properties (CORS honoured on preflight) and stats.
async function serviceGroup() {
  const before = await service.getProperties();
  same([before.logging?.read, before.hourMetrics?.enabled, before.cors?.length ?? 0], [false, false, 0], "the default properties");
  await service.setProperties({
    cors: [{ allowedOrigins: "https://app.example", allowedMethods: "GET,PUT", allowedHeaders: "x-ms-*,content-type", exposedHeaders: "x-ms-request-id", maxAgeInSeconds: 60 }],
    logging: { version: "1.0", delete: true, read: false, write: true, retentionPolicy: { enabled: true, days: 3 } },
  });
  const after = await service.getProperties();
  same([after.cors?.[0]?.allowedOrigins, after.cors?.[0]?.maxAgeInSeconds, after.logging?.write, after.logging?.retentionPolicy?.days], ["https://app.example", 60, true, 3], "the properties read back");
  const url = `${endpoint.replace(/\/$/, "")}/Tables`;
  const preflight = await fetch(url, { method: "OPTIONS", headers: { Origin: "https://app.example", "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "x-ms-date,content-type" } });
  same([preflight.status, preflight.headers.get("access-control-allow-origin"), preflight.headers.get("access-control-max-age")], [200, "https://app.example", "60"], "a preflight a rule allows");
  const refused = await fetch(url, { method: "OPTIONS", headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "PUT" } });
  same(refused.status, 403, "a preflight from another origin");
  // Only the secondary location serves the stats, as on Azure. The SDK finds it by
  // renaming the host's first label (`acct` to `acct-secondary`), which an IP
  // address doesn't have, so with a path-style endpoint the call reaches the primary
  // and is refused; a client made for the secondary's URL reads them.
  same(await status(service.getStatistics()), 400, "the primary refuses the stats");
  const secondary = new TableServiceClient(`${endpoint.replace(/\/$/, "")}-secondary`, credential, options);
  const stats = await secondary.getStatistics();
  same(stats.geoReplication?.status, "live", "the secondary serves the stats");
  await service.setProperties({ cors: [] });
  console.log("service ok");
}

try {
  await tablesGroup();
  await crudGroup();
  await typesGroup();
  await batchGroup();
  await pagingGroup();
  await sasGroup();
  await aclGroup();
  await serviceGroup();
  for (const name of tables) await service.deleteTable(name);
  console.log(`ok ${checks} checks`);
} catch (e) {
  console.error(e.stack ?? String(e));
  process.exit(1);
}
