//! Query plans. (Being written: helper "core-filter".)

/// One bound of a RowKey range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyBound {
    /// The bound's key.
    pub key: String,
    /// Whether the bound itself is in the range.
    pub inclusive: bool,
}

/// How the service will run a query, best first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryPlan {
    /// PartitionKey and RowKey both fixed by equality.
    Point {
        /// The PartitionKey.
        partition_key: String,
        /// The RowKey.
        row_key: String,
    },
    /// PartitionKey fixed; a RowKey range.
    Range {
        /// The PartitionKey.
        partition_key: String,
        /// Lower RowKey bound.
        lower: Option<KeyBound>,
        /// Upper RowKey bound.
        upper: Option<KeyBound>,
    },
    /// PartitionKey fixed; every row of the partition is visited.
    PartitionScan {
        /// The PartitionKey.
        partition_key: String,
    },
    /// No PartitionKey equality: every partition is visited.
    TableScan,
}
