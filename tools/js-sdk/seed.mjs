// Writes and reads rows with the official Azure Tables JS SDK (pinned in
// package.json), so the Rust tests can check that derived types read, update and
// write back what another SDK wrote, keeping every column.
//
//   node seed.mjs write <connection-string> <table>   create the table, upsert the rows
//   node seed.mjs read  <connection-string> <table>   print every row as JSON
//
// `read` prints [{ partitionKey, rowKey, properties: { name: { type, value } } }],
// sorted by keys, with the EDM type the SDK reports for each value.
import { TableClient } from "@azure/data-tables";

const [command, connection, table] = process.argv.slice(2);
if (!["write", "read"].includes(command) || !connection || !table) {
  console.error("usage: node seed.mjs write|read <connection-string> <table>");
  process.exit(2);
}
const client = TableClient.fromConnectionString(connection, table, {
  allowInsecureConnection: true,
});

// The employees and departments of the table design patterns
// (https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns),
// marked two ways at once: by the
// RowKey prefix and by a `Type` column. Plain JS values, as a JS user writes them.
const rows = [
  {
    partitionKey: "Sales", rowKey: "DEPARTMENT", Type: "Department", Name: "Sales",
    Budget: 1250000.5, EmployeeCount: 2, FloorPlan: new Uint8Array([1, 2, 3, 4]),
  },
  {
    partitionKey: "Sales", rowKey: "EMPLOYEE_000100", Type: "Employee", FirstName: "Ann",
    LastName: "Jones", Age: 34, Role: 1, HireDate: new Date("2019-04-01T09:00:00Z"),
    Salary: { value: "95000", type: "Int64" }, Active: true, Email: "ann@contoso.com",
    Notes: "written by the JS SDK",
    Id: { value: "3f0e1a6c-8f4e-4a3b-9a53-1c2d3e4f5a6b", type: "Guid" },
  },
  {
    partitionKey: "Sales", rowKey: "EMPLOYEE_000150", Type: "Employee", FirstName: "Bob",
    LastName: "Smith", Age: 41, Role: 0, HireDate: new Date("2021-10-15T00:00:00Z"),
    Salary: { value: "72000", type: "Int64" }, Active: false, Email: "bob@contoso.com",
    Nickname: "Bobby",
  },
];

async function write() {
  try {
    await client.createTable();
  } catch (e) {
    if (e.statusCode !== 409) throw e;
  }
  for (const row of rows) await client.upsertEntity(row, "Replace");
}

function typed(value) {
  if (value !== null && typeof value === "object" && "type" in value) {
    return { type: value.type, value: value.value };
  }
  if (typeof value === "boolean") return { type: "Boolean", value };
  if (typeof value === "number") {
    return { type: Number.isInteger(value) ? "Int32" : "Double", value };
  }
  return { type: "String", value };
}

async function read() {
  const out = [];
  for await (const entity of client.listEntities({ disableTypeConversion: true })) {
    const properties = {};
    for (const [name, value] of Object.entries(entity)) {
      if (["partitionKey", "rowKey", "etag", "timestamp"].includes(name)) continue;
      if (name.startsWith("odata.")) continue;
      properties[name] = typed(value);
    }
    out.push({ partitionKey: entity.partitionKey.value ?? entity.partitionKey,
               rowKey: entity.rowKey.value ?? entity.rowKey, properties });
  }
  out.sort((a, b) => (a.partitionKey + "\u0000" + a.rowKey).localeCompare(b.partitionKey + "\u0000" + b.rowKey));
  console.log(JSON.stringify(out, null, 1));
}

try {
  await (command === "write" ? write() : read());
} catch (e) {
  console.error(`${command} failed: ${e.message}`);
  process.exit(1);
}
