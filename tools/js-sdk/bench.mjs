// Load for the server bench (tests/benches/server_vs_azurite.rs): point inserts,
// point gets or partition scans through the official JS SDK, `concurrency` at once.
//
//   node bench.mjs <connection-string> <table> <insert|get|scan> <concurrency> <count>
//
// The table exists. Inserts write rows p<worker>/<n>; gets read them back; a scan
// reads partition s whole, `count` scans in all. Prints `{"ops":N,"seconds":S}`
// (entities for scans).
import { TableClient } from "@azure/data-tables";

const [connection, table, op, concurrencyText, countText] = process.argv.slice(2);
const concurrency = Number(concurrencyText);
const count = Number(countText);
const client = TableClient.fromConnectionString(connection, table, { allowInsecureConnection: true });
const perWorker = Math.ceil(count / concurrency);

async function worker(w) {
  let done = 0;
  for (let i = 0; i < perWorker; i += 1) {
    const rowKey = String(i).padStart(8, "0");
    if (op === "insert") {
      await client.createEntity({ partitionKey: `p${w}`, rowKey, Name: `name ${i}`, Age: i, Score: i / 3, Active: i % 2 === 0 });
      done += 1;
    } else if (op === "get") {
      await client.getEntity(`p${w}`, rowKey);
      done += 1;
    } else {
      for await (const page of client.listEntities({ queryOptions: { filter: "PartitionKey eq 's'" } }).byPage({ maxPageSize: 1000 })) {
        done += page.length;
      }
    }
  }
  return done;
}

const started = process.hrtime.bigint();
const done = await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
console.log(JSON.stringify({ ops: done.reduce((a, b) => a + b, 0), seconds }));
