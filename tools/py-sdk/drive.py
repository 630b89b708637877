"""The official Azure Tables Python SDK (azure-data-tables, pinned in
requirements.txt) against a Table endpoint: tables, every write mode with ETags,
every Edm type at its extremes read back exactly, batches (a failing operation:
its index, nothing applied), paging, $filter and $select, table SAS with key
ranges and permissions, table ACLs (stored access policies) and service
properties.

    python drive.py "<connection string>" <table prefix>

Prints one line per check, then "ok <n> checks"; exits non-zero on the first
failed check.
"""

import math
import sys
import uuid
from datetime import datetime, timedelta, timezone

from azure.core import MatchConditions
from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.core.exceptions import (
    HttpResponseError,
    ResourceExistsError,
    ResourceModifiedError,
    ResourceNotFoundError,
)
from azure.data.tables import (
    EdmType,
    EntityProperty,
    TableAccessPolicy,
    TableClient,
    TableCorsRule,
    TableSasPermissions,
    TableServiceClient,
    TableTransactionError,
    UpdateMode,
    generate_table_sas,
)

CHECKS = 0


def check(name, condition, detail=""):
    global CHECKS
    if not condition:
        print(f"FAILED {name} {detail}")
        sys.exit(1)
    CHECKS += 1
    print(f"ok - {name}")


def raises(name, error_type, action):
    try:
        action()
    except error_type as err:
        check(name, True)
        return err
    except Exception as err:  # the wrong kind of failure
        check(name, False, f"raised {type(err).__name__}: {err}")
    check(name, False, f"did not raise {error_type.__name__}")
    return None


def settings(connection):
    parts = dict(p.split("=", 1) for p in connection.split(";") if "=" in p)
    return parts["AccountName"], parts["AccountKey"], parts["TableEndpoint"].rstrip("/")


def main():
    connection, prefix = sys.argv[1], sys.argv[2]
    account, key, endpoint = settings(connection)
    service = TableServiceClient.from_connection_string(connection)

    # Tables.
    name = f"{prefix}py"
    table = service.create_table(name)
    check("create a table", table.table_name == name)
    raises("a second create is refused", ResourceExistsError, lambda: service.create_table(name))
    names = [t.name for t in service.query_tables(f"TableName eq '{name}'")]
    check("query tables by name", names == [name], names)

    # Every write mode, with ETags.
    created = table.create_entity({"PartitionKey": "p", "RowKey": "r", "Name": "first", "N": 1})
    etag = created["etag"]
    check("insert answers an ETag", etag.startswith('W/"datetime'), etag)
    raises(
        "insert of an existing key is refused",
        ResourceExistsError,
        lambda: table.create_entity({"PartitionKey": "p", "RowKey": "r"}),
    )
    table.update_entity(
        {"PartitionKey": "p", "RowKey": "r", "Extra": True},
        mode=UpdateMode.MERGE,
        etag=etag,
        match_condition=MatchConditions.IfNotModified,
    )
    merged = table.get_entity("p", "r")
    check("merge keeps what it does not mention", merged["Name"] == "first" and merged["Extra"] is True)
    raises(
        "a stale ETag is refused",
        ResourceModifiedError,
        lambda: table.update_entity(
            {"PartitionKey": "p", "RowKey": "r", "Name": "late"},
            mode=UpdateMode.REPLACE,
            etag=etag,
            match_condition=MatchConditions.IfNotModified,
        ),
    )
    table.update_entity({"PartitionKey": "p", "RowKey": "r", "Name": "replaced"}, mode=UpdateMode.REPLACE)
    replaced = table.get_entity("p", "r")
    check("replace drops what it does not mention", "Extra" not in replaced and replaced["Name"] == "replaced")
    table.upsert_entity({"PartitionKey": "p", "RowKey": "u", "A": 1}, mode=UpdateMode.REPLACE)
    table.upsert_entity({"PartitionKey": "p", "RowKey": "u", "B": 2}, mode=UpdateMode.MERGE)
    upserted = table.get_entity("p", "u")
    check("upserts create, then merge", upserted["A"] == 1 and upserted["B"] == 2)
    table.upsert_entity({"PartitionKey": "p", "RowKey": "u", "C": 3}, mode=UpdateMode.REPLACE)
    check("upsert-replace replaces", set(table.get_entity("p", "u").keys()) >= {"C"} and "A" not in table.get_entity("p", "u"))
    raises(
        "update of a missing entity is refused",
        ResourceNotFoundError,
        lambda: table.update_entity({"PartitionKey": "p", "RowKey": "none"}, mode=UpdateMode.MERGE),
    )
    table.delete_entity("p", "u")
    raises("a deleted entity is gone", ResourceNotFoundError, lambda: table.get_entity("p", "u"))

    # Every Edm type at its extremes, read back exactly.
    guid = uuid.UUID("01234567-89ab-cdef-0123-456789abcdef")
    early = datetime(1601, 1, 1, tzinfo=timezone.utc)
    late = datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc)
    typed = {
        "PartitionKey": "types",
        "RowKey": "extremes",
        "I32Min": -(2**31),
        "I32Max": 2**31 - 1,
        "I64Min": EntityProperty(-(2**63), EdmType.INT64),
        "I64Max": EntityProperty(2**63 - 1, EdmType.INT64),
        "DoubleMax": 1.7976931348623157e308,
        "DoubleTiny": 5e-324,
        "DoubleNegZero": -0.0,
        "DoubleNaN": float("nan"),
        "DoubleInf": float("inf"),
        "DoubleNegInf": float("-inf"),
        "Early": early,
        "Late": late,
        "Guid": guid,
        "Bytes": bytes(range(256)) * 16,
        "Empty": "",
        "Text": "\u00e9\u00e8 \U0001F600 \u4e2d\u6587 \"quoted\" \\ /",
        "True": True,
        "False": False,
    }
    table.create_entity(typed)
    back = table.get_entity("types", "extremes")
    check("Int32 extremes", back["I32Min"] == -(2**31) and back["I32Max"] == 2**31 - 1)
    check(
        "Int64 extremes",
        back["I64Min"].value == -(2**63) and back["I64Max"].value == 2**63 - 1
        and back["I64Max"].edm_type == EdmType.INT64,
        (back["I64Min"], back["I64Max"]),
    )
    check("Double extremes", back["DoubleMax"] == 1.7976931348623157e308 and back["DoubleTiny"] == 5e-324)
    check("Double -0.0 keeps its sign", back["DoubleNegZero"] == 0.0 and math.copysign(1.0, back["DoubleNegZero"]) < 0)
    check("Double NaN and infinities", math.isnan(back["DoubleNaN"]) and back["DoubleInf"] == math.inf and back["DoubleNegInf"] == -math.inf)
    check("DateTime extremes", back["Early"] == early and back["Late"] == late, (back["Early"], back["Late"]))
    check("Guid", back["Guid"] == guid, back["Guid"])
    check("Binary", back["Bytes"] == bytes(range(256)) * 16)
    check("strings and booleans", back["Empty"] == "" and back["Text"] == typed["Text"] and back["True"] is True and back["False"] is False)

    # Batches: all or nothing; a failure names its operation.
    table.submit_transaction(
        [("create", {"PartitionKey": "b", "RowKey": str(i), "N": i}) for i in range(5)]
        + [("upsert", {"PartitionKey": "b", "RowKey": "x", "N": 9}, {"mode": "merge"})]
    )
    check("a batch applies every operation", len(list(table.query_entities("PartitionKey eq 'b'"))) == 6)
    err = raises(
        "a batch with a failing operation is refused",
        TableTransactionError,
        lambda: table.submit_transaction(
            [
                ("create", {"PartitionKey": "b", "RowKey": "new"}),
                ("update", {"PartitionKey": "b", "RowKey": "missing", "N": 1}),
            ]
        ),
    )
    check("the failure names operation 1", getattr(err, "index", None) == 1, getattr(err, "index", None))
    raises("nothing of the failed batch applied", ResourceNotFoundError, lambda: table.get_entity("b", "new"))

    # Paging, $filter and $select.
    table.submit_transaction([("create", {"PartitionKey": "page", "RowKey": f"{i:03}", "N": i}) for i in range(100)])
    pages = list(table.query_entities("PartitionKey eq 'page'", results_per_page=7).by_page())
    sizes = [len(list(page)) for page in pages]
    check("paging in pages of 7", sum(sizes) == 100 and max(sizes) == 7 and len(sizes) == 15, sizes)
    found = list(
        table.query_entities(
            "PartitionKey eq @pk and N ge @low", parameters={"pk": "page", "low": 95}, select=["N"]
        )
    )
    check("$filter with parameters and $select", [e["N"] for e in found] == [95, 96, 97, 98, 99] and "RowKey" not in found[0], found[:1])

    # Table SAS: permissions and key ranges.
    credential = AzureNamedKeyCredential(account, key)
    expiry = datetime.now(timezone.utc) + timedelta(hours=1)
    sas = generate_table_sas(
        credential,
        name,
        permission=TableSasPermissions(read=True),
        expiry=expiry,
        start_pk="page",
        start_rk="010",
        end_pk="page",
        end_rk="019",
    )
    reader = TableClient(endpoint, name, credential=AzureSasCredential(sas))
    rows = [e["RowKey"] for e in reader.query_entities("PartitionKey eq 'page'")]
    check("a key-range SAS reads only its range", rows == [f"{i:03}" for i in range(10, 20)], rows)
    raises("a point read outside the range is refused", HttpResponseError, lambda: reader.get_entity("page", "050"))
    raises(
        "a read-only SAS can't insert",
        HttpResponseError,
        lambda: reader.create_entity({"PartitionKey": "page", "RowKey": "015x"}),
    )

    # Table ACLs: a stored access policy, used by a SAS, and revoked.
    table.set_table_access_policy(
        signed_identifiers={"readers": TableAccessPolicy(permission="r", expiry=expiry)}
    )
    policies = table.get_table_access_policy()
    check("a stored access policy reads back", "readers" in policies and policies["readers"].permission == "r", policies)
    by_policy = generate_table_sas(credential, name, policy_id="readers")
    policy_reader = TableClient(endpoint, name, credential=AzureSasCredential(by_policy))
    check("a SAS naming the policy reads", policy_reader.get_entity("p", "r")["Name"] == "replaced")
    table.set_table_access_policy(signed_identifiers={})
    raises("removing the policy revokes its SAS", HttpResponseError, lambda: policy_reader.get_entity("p", "r"))

    # Service properties: a CORS rule reads back.
    rule = TableCorsRule(["https://py.example"], ["GET", "PUT"], max_age_in_seconds=60)
    service.set_service_properties(cors=[rule])
    cors = service.get_service_properties()["cors"]
    check("service properties keep a CORS rule", len(cors) == 1 and cors[0].allowed_origins == ["https://py.example"], cors)
    service.set_service_properties(cors=[])

    service.delete_table(name)
    raises("a deleted table is gone", ResourceNotFoundError, lambda: table.get_entity("p", "r"))
    print(f"ok {CHECKS} checks")


if __name__ == "__main__":
    main()
