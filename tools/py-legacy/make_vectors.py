"""Writes the legacy client-side encryption test vectors with the last Python SDK
that wrote that format (azure-cosmosdb-table 1.0.6, the format of the .NET storage
library's TableEncryptionPolicy), through its public API, against any table endpoint.

    python -m venv .venv && .venv/bin/pip install --require-hashes --no-deps -r requirements.txt
    .venv/bin/python make_vectors.py "<connection string>" > ../../tests/fixtures/legacy_encryption_vectors.json

The rows are written with encryption, read back raw (no key: the stored form) and
read back decrypted by the same SDK (to check they round-trip); the output lists,
per row, the stored properties (with their EDM types) and the plaintexts.
"""

import base64
import json
import sys

from cryptography.hazmat.primitives.keywrap import aes_key_unwrap, aes_key_wrap
from azure.cosmosdb.table.models import EdmType, EntityProperty
from azure.cosmosdb.table.tableservice import TableService

KEY_ID = "legacy-key-1"
KEY = bytes(range(32))
TABLE = "legacyvectors"


class AesKeyWrap:
    """A key-encryption key the legacy SDK accepts: RFC 3394 AES key wrap, named
    A256KW as Azure Key Vault's symmetric keys name it."""

    def wrap_key(self, key):
        return aes_key_wrap(KEY, key)

    def unwrap_key(self, key, algorithm):
        assert algorithm == "A256KW", algorithm
        return aes_key_unwrap(KEY, key)

    def get_key_wrap_algorithm(self):
        return "A256KW"

    def get_kid(self):
        return KEY_ID


ROWS = [
    (
        {"PartitionKey": "Sales", "RowKey": "00042", "Name": "Ann", "Age": 37},
        {"SSN": "123-45-6789", "Note": ""},
    ),
    (
        {"PartitionKey": "Oslo \u00f8st", "RowKey": "\u00fcn\u00efcode", "Name": "Bj\u00f8rn"},
        {"Secret": "\u65e5\u672c\u8a9e and a longer text: " + "0123456789" * 5},
    ),
]


def stored(value):
    if isinstance(value, EntityProperty):
        if value.type == EdmType.BINARY:
            return {"type": "Edm.Binary", "value": base64.b64encode(value.value).decode()}
        return {"type": value.type, "value": value.value}
    if isinstance(value, bytes):
        return {"type": "Edm.Binary", "value": base64.b64encode(value).decode()}
    if isinstance(value, bool):
        return {"type": "Edm.Boolean", "value": value}
    if isinstance(value, int):
        return {"type": "Edm.Int32", "value": value}
    if isinstance(value, str):
        return {"type": "Edm.String", "value": value}
    raise TypeError(f"unexpected stored value {value!r}")


def main():
    connection = sys.argv[1]
    writer = TableService(connection_string=connection)
    writer.key_encryption_key = AesKeyWrap()
    writer.require_encryption = True
    writer.create_table(TABLE, fail_on_exist=True)
    reader = TableService(connection_string=connection)
    vectors = []
    for plain, secret in ROWS:
        entity = dict(plain)
        for name, text in secret.items():
            entity[name] = EntityProperty(EdmType.STRING, text, encrypt=True)
        writer.insert_entity(TABLE, entity)
        pk, rk = plain["PartitionKey"], plain["RowKey"]
        raw = reader.get_entity(TABLE, pk, rk)
        back = writer.get_entity(TABLE, pk, rk)
        for name, text in secret.items():
            assert back[name] == text, (name, back[name], text)
        skip = {"PartitionKey", "RowKey", "Timestamp", "etag"}
        vectors.append(
            {
                "PartitionKey": pk,
                "RowKey": rk,
                "stored": {k: stored(v) for k, v in sorted(raw.items()) if k not in skip},
                "plaintext": secret,
            }
        )
    writer.delete_table(TABLE)
    json.dump(
        {
            "written_by": "azure-cosmosdb-table 1.0.6 (tools/py-legacy/make_vectors.py)",
            "key_id": KEY_ID,
            "key_hex": KEY.hex(),
            "algorithm": "A256KW",
            "rows": vectors,
        },
        sys.stdout,
        indent=2,
        ensure_ascii=False,
    )
    print()


if __name__ == "__main__":
    main()
