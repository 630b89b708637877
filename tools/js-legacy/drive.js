// The legacy Azure Storage SDK for Node (`azure-storage` 2.10.7, pinned in
// package-lock.json) against a table endpoint: tables, every write mode with
// ETags, a batch that succeeds and one with a failing operation (nothing applied),
// a paged query, a table SAS with key ranges, Edm values at their extremes read
// back exactly. Prints `ok <n> checks`; exits 1 at the first failed check.
//
//   node drive.js '<connection string>' <table-name prefix>
"use strict";

const azure = require("azure-storage");

const [connection, prefix] = process.argv.slice(2);
if (!connection || !prefix) {
  console.error("usage: node drive.js '<connection string>' <table-name prefix>");
  process.exit(2);
}
const endpoint = /TableEndpoint=([^;]+)/.exec(connection)[1];
const service = azure.createTableService(connection);
const gen = azure.TableUtilities.entityGenerator;
let checks = 0;

function check(condition, what) {
  if (!condition) {
    console.error(`FAILED: ${what}`);
    process.exit(1);
  }
  checks += 1;
}

// Calls `method` of `on` with the arguments and a callback; resolves with
// `{ error, result, response }` so refusals can be checked too.
function call(on, method, ...args) {
  return new Promise((resolve) => {
    on[method](...args, (error, result, response) => resolve({ error, result, response }));
  });
}

async function ok(on, method, ...args) {
  const { error, result, response } = await call(on, method, ...args);
  if (error) {
    console.error(`FAILED: ${method} answered ${error.statusCode} ${error.code}: ${error.message}`);
    process.exit(1);
  }
  return { result, response };
}

const value = (entity, name) => (entity[name] === undefined ? undefined : entity[name]._);

async function tables(table) {
  await ok(service, "createTable", table);
  const again = await call(service, "createTable", table);
  check(again.error && again.error.statusCode === 409, "creating a table twice is 409");
  const exists = await ok(service, "doesTableExist", table);
  check(exists.result.exists === true, "doesTableExist sees the new table");
  const listed = await ok(service, "listTablesSegmentedWithPrefix", prefix, null);
  check(listed.result.entries.includes(table), "listTablesSegmentedWithPrefix lists it");
}

async function writeModes(table) {
  const entity = { PartitionKey: gen.String("p"), RowKey: gen.String("w"), N: gen.Int32(1) };
  const inserted = await ok(service, "insertEntity", table, entity);
  const etag1 = inserted.result[".metadata"].etag;
  check(/^W\/"datetime'/.test(etag1), `insert answers a weak ETag (${etag1})`);
  const dup = await call(service, "insertEntity", table, entity);
  check(dup.error && dup.error.statusCode === 409, "inserting an existing entity is 409");

  // Replace, conditional on the ETag read.
  const replaced = await ok(service, "replaceEntity", table, {
    ...entity, N: gen.Int32(2), ".metadata": { etag: etag1 },
  });
  const etag2 = replaced.result[".metadata"].etag;
  check(etag2 !== etag1, "a replace changes the ETag");
  const stale = await call(service, "replaceEntity", table, {
    ...entity, N: gen.Int32(3), ".metadata": { etag: etag1 },
  });
  check(stale.error && stale.error.statusCode === 412, "a replace with a stale ETag is 412");

  // Merge keeps the other properties.
  await ok(service, "mergeEntity", table, {
    PartitionKey: gen.String("p"), RowKey: gen.String("w"), M: gen.String("m"),
  });
  let read = (await ok(service, "retrieveEntity", table, "p", "w")).result;
  check(value(read, "N") === 2 && value(read, "M") === "m", "merge keeps N and adds M");

  // Insert-or-replace drops what it doesn't name; insert-or-merge keeps it.
  await ok(service, "insertOrReplaceEntity", table, {
    PartitionKey: gen.String("p"), RowKey: gen.String("w"), R: gen.Boolean(true),
  });
  read = (await ok(service, "retrieveEntity", table, "p", "w")).result;
  check(value(read, "N") === undefined && value(read, "R") === true, "insertOrReplace replaces");
  await ok(service, "insertOrMergeEntity", table, {
    PartitionKey: gen.String("p"), RowKey: gen.String("w"), S: gen.String("s"),
  });
  read = (await ok(service, "retrieveEntity", table, "p", "w")).result;
  check(value(read, "R") === true && value(read, "S") === "s", "insertOrMerge merges");
  // Upserts of a missing entity insert it.
  await ok(service, "insertOrMergeEntity", table, {
    PartitionKey: gen.String("p"), RowKey: gen.String("new"), S: gen.String("n"),
  });
  check(
    value((await ok(service, "retrieveEntity", table, "p", "new")).result, "S") === "n",
    "insertOrMerge of a missing entity inserts it",
  );

  // Delete: a stale ETag is 412, then an unconditional delete, then 404.
  const staleDelete = await call(service, "deleteEntity", table, {
    PartitionKey: gen.String("p"), RowKey: gen.String("w"), ".metadata": { etag: etag1 },
  });
  check(staleDelete.error && staleDelete.error.statusCode === 412, "a stale delete is 412");
  await ok(service, "deleteEntity", table, { PartitionKey: gen.String("p"), RowKey: gen.String("w") });
  const gone = await call(service, "retrieveEntity", table, "p", "w");
  check(gone.error && gone.error.statusCode === 404, "a deleted entity reads 404");
  const missing = await call(service, "mergeEntity", table, {
    PartitionKey: gen.String("p"), RowKey: gen.String("w"), M: gen.String("m"),
  });
  check(missing.error && missing.error.statusCode === 404, "merging a missing entity is 404");
}

async function batches(table) {
  const batch = new azure.TableBatch();
  for (let i = 0; i < 5; i += 1) {
    batch.insertEntity({ PartitionKey: gen.String("b"), RowKey: gen.String(`r${i}`), I: gen.Int32(i) });
  }
  batch.insertOrReplaceEntity({ PartitionKey: gen.String("b"), RowKey: gen.String("u"), I: gen.Int32(9) });
  const done = await ok(service, "executeBatch", table, batch);
  check(done.result.length === 6, "a batch answers one result per operation");
  check(done.result.every((r) => r.response.isSuccessful), "every operation of the batch succeeded");
  check(
    done.result.slice(0, 5).every((r) => r.entity && r.entity[".metadata"].etag),
    "each insert of the batch comes back with its ETag",
  );

  // A batch whose third operation fails (r1 exists): nothing of it applies.
  const failing = new azure.TableBatch();
  failing.insertEntity({ PartitionKey: gen.String("b"), RowKey: gen.String("x1"), I: gen.Int32(1) });
  failing.mergeEntity({ PartitionKey: gen.String("b"), RowKey: gen.String("r0"), J: gen.Int32(1) });
  failing.insertEntity({ PartitionKey: gen.String("b"), RowKey: gen.String("r1"), I: gen.Int32(1) });
  const refused = await call(service, "executeBatch", table, failing);
  const failedOps = refused.error
    ? [refused.error]
    : (refused.result || []).filter((r) => !r.response.isSuccessful);
  check(failedOps.length > 0, "a batch with a conflicting insert fails");
  const statusOf = (f) => f.statusCode || (f.response && f.response.statusCode);
  check(failedOps.some((f) => statusOf(f) === 409), "the failing operation is a 409");
  const notApplied = await call(service, "retrieveEntity", table, "b", "x1");
  check(notApplied.error && notApplied.error.statusCode === 404, "nothing of the failed batch applied");
  const r0 = (await ok(service, "retrieveEntity", table, "b", "r0")).result;
  check(value(r0, "J") === undefined, "the failed batch's merge did not apply");
}

async function paging(table) {
  const rows = 23;
  for (let start = 0; start < rows; start += 10) {
    const batch = new azure.TableBatch();
    for (let i = start; i < Math.min(rows, start + 10); i += 1) {
      batch.insertEntity({ PartitionKey: gen.String("page"), RowKey: gen.String(`r${String(i).padStart(3, "0")}`) });
    }
    await ok(service, "executeBatch", table, batch);
  }
  const query = new azure.TableQuery().top(5).where("PartitionKey eq ?", "page");
  const seen = [];
  let token = null;
  let pages = 0;
  do {
    const { result } = await ok(service, "queryEntities", table, query, token);
    check(result.entries.length <= 5, "a page holds at most $top rows");
    seen.push(...result.entries.map((e) => value(e, "RowKey")));
    token = result.continuationToken;
    pages += 1;
  } while (token);
  check(pages >= 5, `23 rows in pages of 5 take 5 pages (${pages})`);
  check(seen.length === rows && new Set(seen).size === rows, "every row once across the pages");
  check(seen.every((rk, i) => i === 0 || seen[i - 1] < rk), "rows in key order");
  const selected = await ok(
    service, "queryEntities", table,
    new azure.TableQuery().select("RowKey").where("PartitionKey eq ? and RowKey ge ?", "page", "r020"),
    null,
  );
  check(selected.result.entries.length === 3, "a filter on both keys selects 3 rows");
}

async function sas(table) {
  for (const pk of ["a", "m", "z"]) {
    await ok(service, "insertEntity", table, { PartitionKey: gen.String(pk), RowKey: gen.String("k") });
  }
  const start = new Date(Date.now() - 5 * 60 * 1000);
  const expiry = new Date(Date.now() + 60 * 60 * 1000);
  const token = service.generateSharedAccessSignature(table, {
    AccessPolicy: {
      Permissions: azure.TableUtilities.SharedAccessPermissions.QUERY
        + azure.TableUtilities.SharedAccessPermissions.ADD,
      Start: start,
      Expiry: expiry,
      StartPk: "b",
      EndPk: "n",
    },
  });
  const limited = azure.createTableServiceWithSas(endpoint, token);
  const inRange = await call(limited, "retrieveEntity", table, "m", "k");
  check(!inRange.error, "the SAS reads a partition inside its range");
  const outside = await call(limited, "retrieveEntity", table, "z", "k");
  check(outside.error && outside.error.statusCode === 403, "the SAS refuses a partition outside its range");
  const all = await ok(limited, "queryEntities", table, new azure.TableQuery(), null);
  const partitions = all.result.entries.map((e) => value(e, "PartitionKey"));
  check(partitions.includes("m") && !partitions.includes("a") && !partitions.includes("z"),
    `a query through the SAS answers its range only (${partitions})`);
  const added = await call(limited, "insertEntity", table, { PartitionKey: gen.String("c"), RowKey: gen.String("k") });
  check(!added.error, "the SAS inserts inside its range");
  const addedOut = await call(limited, "insertEntity", table, { PartitionKey: gen.String("x"), RowKey: gen.String("k") });
  check(addedOut.error && addedOut.error.statusCode === 403, "the SAS refuses an insert outside its range");
  const deleted = await call(limited, "deleteEntity", table, { PartitionKey: gen.String("m"), RowKey: gen.String("k") });
  check(deleted.error && deleted.error.statusCode === 403, "the SAS refuses a delete it doesn't grant");
}

async function extremes(table) {
  const bytes = Buffer.from([0, 1, 2, 253, 254, 255]);
  const when = new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999));
  const early = new Date(Date.UTC(1601, 0, 1, 0, 0, 0, 1));
  const entity = {
    PartitionKey: gen.String("edm"),
    RowKey: gen.String("extremes"),
    I32Max: gen.Int32(2147483647),
    I32Min: gen.Int32(-2147483648),
    I64Max: gen.Int64("9223372036854775807"),
    I64Min: gen.Int64("-9223372036854775808"),
    I64Odd: gen.Int64("9007199254740993"),
    DMax: gen.Double(1.7976931348623157e308),
    DTiny: gen.Double(5e-324),
    DNeg: gen.Double(-0.5),
    Late: gen.DateTime(when),
    Early: gen.DateTime(early),
    Id: gen.Guid("c9da6455-213d-42c9-9a79-3e9149a57833"),
    Bytes: gen.Binary(bytes),
    Empty: gen.Binary(Buffer.alloc(0)),
    Yes: gen.Boolean(true),
    No: gen.Boolean(false),
    Text: gen.String("Grüße, 世界 🌍 'quoted' \"double\""),
    Blank: gen.String(""),
  };
  await ok(service, "insertEntity", table, entity);
  const read = (await ok(service, "retrieveEntity", table, "edm", "extremes")).result;
  check(value(read, "I32Max") === 2147483647 && value(read, "I32Min") === -2147483648, "Int32 extremes");
  check(value(read, "I64Max") === "9223372036854775807", `Int64 max (${value(read, "I64Max")})`);
  check(value(read, "I64Min") === "-9223372036854775808", "Int64 min");
  check(value(read, "I64Odd") === "9007199254740993", "an Int64 beyond 2^53 exactly");
  check(value(read, "DMax") === 1.7976931348623157e308, "Double max");
  check(value(read, "DTiny") === 5e-324, "the smallest subnormal Double");
  check(value(read, "DNeg") === -0.5, "a negative Double");
  check(value(read, "Late").getTime() === when.getTime(), `DateTime 9999 (${value(read, "Late").toISOString()})`);
  check(value(read, "Early").getTime() === early.getTime(), "DateTime 1601 to the millisecond");
  check(String(value(read, "Id")) === "c9da6455-213d-42c9-9a79-3e9149a57833", "Guid");
  check(Buffer.compare(value(read, "Bytes"), bytes) === 0, "Binary bytes exactly");
  check(value(read, "Empty").length === 0, "an empty Binary");
  check(value(read, "Yes") === true && value(read, "No") === false, "Booleans");
  check(value(read, "Text") === entity.Text._, "a string of every script");
  check(value(read, "Blank") === "", "an empty string");
  // Filters on typed values find the row.
  const found = await ok(service, "queryEntities", table,
    new azure.TableQuery().where("I64Max eq 9223372036854775807L and Yes eq true"), null);
  check(found.result.entries.length === 1, "an Int64 and Boolean filter finds the row");
}

async function main() {
  const table = `${prefix}legacy${Date.now() % 100000}`;
  await tables(table);
  await writeModes(table);
  await batches(table);
  await paging(table);
  await sas(table);
  await extremes(table);
  await ok(service, "deleteTable", table);
  const after = await ok(service, "doesTableExist", table);
  check(after.result.exists === false, "a deleted table no longer exists");
  console.log(`ok ${checks} checks`);
}

main().catch((err) => {
  console.error(`FAILED: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
});
