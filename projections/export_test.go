package projections

// FirstPendingQuery is firstPendingQuery, for its plan test.
const FirstPendingQuery = firstPendingQuery
