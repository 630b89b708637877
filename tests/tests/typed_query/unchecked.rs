//! Unchecked filter text (`Query::filter_unchecked`) through the typed layer: sent
//! as written, ANDed in parentheses with the query's own parts; evaluated by the
//! mem engine when the parser reads it and refused, saying so, when not.

use tables_client::{ErrorKind, Origin, QueryPlan, Result};
use tables_tests::typed::Backend;

use crate::fixtures::{in_department, seed, Employee};

/// Unchecked filter text the parser reads is sent as written and narrows the rows
/// as the typed filter does, ANDed (in parentheses) with the partition, the row
/// range and the kind; the typed layer checks none of it.
pub(crate) async fn unchecked_filter_text_narrows_like_a_typed_filter(
    backend: Backend,
) -> Result<()> {
    let service = backend.service();
    let (table, all) = seed(&service).await?;
    let employees = service.table::<Employee>(&table);
    let want: Vec<_> = in_department(&all, "Sales")
        .into_iter()
        .filter(|e| e.age > 35 || e.last_name == "Jones")
        .cloned()
        .collect();
    assert!(!want.is_empty() && want.len() < in_department(&all, "Sales").len());
    // An `or` inside: without the parentheses it would escape the partition.
    let unchecked = employees
        .query()
        .partition("Sales")
        .filter_unchecked("Age gt 35 or LastName eq 'Jones'")
        .collect()
        .await?;
    assert_eq!(unchecked, want);
    let typed = employees
        .query()
        .partition("Sales")
        .filter(Employee::AGE.gt(35).or(Employee::LAST_NAME.eq("Jones")))
        .collect()
        .await?;
    assert_eq!(unchecked, typed);
    // Beyond the service's 15 comparisons the checked filter is refused before
    // anything is sent; unchecked text is not checked (the service decides).
    let sixteen: Vec<String> = (0..16).map(|i| format!("Age eq {}", 20 + i)).collect();
    let mut checked = Employee::AGE.eq(20);
    for i in 1..16 {
        checked = checked.or(Employee::AGE.eq(20 + i));
    }
    let err = employees
        .query()
        .partition("Sales")
        .filter(checked)
        .page(None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidFilter);
    assert_eq!(err.origin(), Origin::Local);
    let prepared = employees
        .query()
        .partition("Sales")
        .filter_unchecked(sixteen.join(" or "));
    assert_eq!(
        prepared.plan(),
        QueryPlan::PartitionScan {
            partition_key: "Sales".into()
        }
    );
    Ok(())
}

/// The in-memory engine evaluates only filters its parser reads: unchecked text it
/// doesn't read fails the query, saying so, instead of matching nothing.
#[tokio::test]
async fn mem_refuses_unchecked_text_it_cannot_evaluate() {
    let service = Backend::Mem.service();
    let (table, _) = seed(&service).await.unwrap();
    let err = service
        .table::<Employee>(&table)
        .query()
        .partition("Sales")
        .filter_unchecked("Age gt 30 AND Age lt 60")
        .collect()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
    assert_eq!(err.origin(), Origin::Service, "{err}");
    let text = err.to_string();
    assert!(text.contains("unchecked filter"), "{text}");
    assert!(text.contains("Age gt 30 AND Age lt 60"), "{text}");
}
