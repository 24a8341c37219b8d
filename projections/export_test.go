package projections

// FirstPendingQuery and HorizonQuery are firstPendingQuery and
// horizonQuery, for their plan test.
const (
	FirstPendingQuery = firstPendingQuery
	HorizonQuery      = horizonQuery
)
