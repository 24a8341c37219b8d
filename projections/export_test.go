package projections

// EventsWaitingQuery is eventsWaitingQuery, for its plan test.
const EventsWaitingQuery = eventsWaitingQuery
