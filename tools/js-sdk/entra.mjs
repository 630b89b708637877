// Drives `tables-server --oauth` over HTTPS with the official Azure Tables JS SDK and
// a token credential of its own (any object with getToken is one): CRUD, a query,
// a reader's write refused. The Rust test `tests/tests/sdk_entra.rs` runs it with
// NODE_EXTRA_CA_CERTS naming the test authority.
//
//   node entra.mjs <account-url> <table> <writer-token> <reader-token>
//
// Prints `ok <n> checks`; exits 1 with what differed.
import { TableClient, TableServiceClient } from "@azure/data-tables";

const [url, table, writerToken, readerToken] = process.argv.slice(2);
if (!readerToken) {
  console.error("usage: node entra.mjs <account-url> <table> <writer-token> <reader-token>");
  process.exit(2);
}
let checks = 0;
const scopes = [];

function check(condition, what) {
  checks += 1;
  if (!condition) throw new Error(`check failed: ${what}`);
}

function credential(token) {
  return {
    async getToken(asked) {
      scopes.push(...(Array.isArray(asked) ? asked : [asked]));
      return { token, expiresOnTimestamp: Date.now() + 3600 * 1000 };
    },
  };
}

try {
  const service = new TableServiceClient(url, credential(writerToken));
  await service.createTable(table);
  const writer = new TableClient(url, table, credential(writerToken));
  await writer.createEntity({ partitionKey: "p", rowKey: "r1", N: 1 });
  await writer.upsertEntity({ partitionKey: "p", rowKey: "r2", N: 2 }, "Replace");
  await writer.updateEntity({ partitionKey: "p", rowKey: "r1", N: 10 }, "Merge");
  const got = await writer.getEntity("p", "r1");
  check(got.N === 10, `the merged row reads back, got ${got.N}`);
  const rows = [];
  for await (const row of writer.listEntities({ queryOptions: { filter: "N gt 1" } })) rows.push(row.rowKey);
  check(rows.join() === "r1,r2", `the query finds r1 and r2, got ${rows}`);
  await writer.deleteEntity("p", "r2");
  check(scopes.every((s) => s === "https://storage.azure.com/.default"), `the storage scope was asked, got ${scopes}`);

  const reader = new TableClient(url, table, credential(readerToken));
  const read = await reader.getEntity("p", "r1");
  check(read.N === 10, "a reader reads");
  let refused = 0;
  try {
    await reader.createEntity({ partitionKey: "p", rowKey: "r3" });
  } catch (e) {
    refused = e.statusCode;
    const code = e.response?.headers?.get("x-ms-error-code");
    check(code === "AuthorizationPermissionMismatch", `a reader's write: ${code}`);
  }
  check(refused === 403, `a reader's write is refused with 403, got ${refused}`);

  await service.deleteTable(table);
  console.log(`ok ${checks} checks`);
} catch (e) {
  console.error(e.message ?? e);
  process.exit(1);
}
