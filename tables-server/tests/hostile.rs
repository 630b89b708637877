//! What a hostile client stores or sends must never make an answer fail: CORS
//! values an answer header can't carry are refused when set (with the account key
//! or an account SAS that may write the service properties), so every later answer
//! to a browser still works.

#![allow(clippy::unwrap_used, missing_docs)] // tests

use reqwest::{Client, StatusCode};
use tables_core::auth::{AccountSasFields, DEVELOPMENT_ACCOUNT};
use tables_core::odata::encode_query_value;
use tables_server::Server;

mod common;

const PROPERTIES: &str = "/devstoreaccount1/?restype=service&comp=properties";

fn cors(exposed: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties><Cors><CorsRule>\
         <AllowedOrigins>https://app.example</AllowedOrigins><AllowedMethods>GET,PUT\
         </AllowedMethods><MaxAgeInSeconds>60</MaxAgeInSeconds><ExposedHeaders>{exposed}\
         </ExposedHeaders><AllowedHeaders>x-ms-*</AllowedHeaders></CorsRule></Cors>\
         </StorageServiceProperties>"
    )
}

/// An account SAS that may write the service properties (`srt=s&sp=w`).
fn service_writer_sas() -> String {
    let fields = AccountSasFields {
        permissions: "w",
        services: "t",
        resource_types: "s",
        expiry: "2099-01-01T00:00:00Z",
        version: "2020-12-06",
        ..AccountSasFields::default()
    };
    let signature = common::dev_key().sign(&fields.string_to_sign(DEVELOPMENT_ACCOUNT));
    format!(
        "sv=2020-12-06&ss=t&srt=s&sp=w&se={}&sig={}",
        encode_query_value(fields.expiry),
        encode_query_value(&signature)
    )
}

#[tokio::test]
async fn cors_values_no_header_can_carry_are_refused_and_answers_keep_working() {
    let server = Server::builder().port(0).start().await.unwrap();
    let (addr, client) = (server.addr(), Client::new());
    let xml = |body: String| Some(("application/xml", body));
    let set = common::signed(
        &client,
        addr,
        "PUT",
        PROPERTIES,
        xml(cors("x-ms-request-id")),
    );
    assert_eq!(set.send().await.unwrap().status(), StatusCode::ACCEPTED);
    let sas_target = format!("{PROPERTIES}&{}", service_writer_sas());
    for bad in [
        "x-ms-a&#10;x-ms-b",
        "x-ms-a\nx-ms-b",
        "x-ms-a\r\nx-ms-b",
        "x-ms-&#1;a",
        "x-ms-\u{7f}a",
    ] {
        let keyed = common::signed(&client, addr, "PUT", PROPERTIES, xml(cors(bad)));
        let by_sas = client
            .put(format!("http://{addr}{sas_target}"))
            .header("x-ms-version", "2020-12-06")
            .header("content-type", "application/xml")
            .body(cors(bad));
        for (who, request) in [("the account key", keyed), ("an account SAS", by_sas)] {
            let answer = request.send().await.unwrap();
            let status = answer.status();
            let code = answer.headers()["x-ms-error-code"]
                .to_str()
                .unwrap()
                .to_owned();
            assert_eq!(
                (status, code.as_str()),
                (StatusCode::BAD_REQUEST, "InvalidXmlNodeValue"),
                "{bad:?} set with {who}"
            );
        }
    }
    // Every answer to a browser still carries the rule that was stored.
    let answer = common::signed(&client, addr, "GET", "/devstoreaccount1/Tables", None)
        .header("origin", "https://app.example")
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    assert_eq!(
        answer.headers()["access-control-expose-headers"],
        "x-ms-request-id"
    );
}
