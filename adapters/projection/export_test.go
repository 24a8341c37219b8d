package projection

// The queries of firstPending and Horizon, for their plan test.
const (
	FirstPendingQuery = firstPendingQuery
	PendingStampQuery = pendingStampQuery
)
