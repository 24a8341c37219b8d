package content

// SyncMargin is how far, in milliseconds, the stamps of an item's events
// and the instants syncs describe may stray from each other: a sync at To
// may not see an event stamped up to SyncMargin before To (committed
// late), and may see one stamped after To. An event's stamp is the
// RecordedAt of the statement that appends it, and the log orders events
// by their transactions' first writes, so an event may carry a stamp a
// little earlier than the one before it in the log's order.
//
// It is the contract between the content projection and the sync read,
// which must agree on it: the projection records when an item stopped
// being live (live_ended_at) whenever a sync may have seen it live, up to
// SyncMargin after the change that ended it; an incremental sync looks
// SyncMargin further back than the client's last sync, which reports
// such changes (and a few already sent: the client merges them again).
// What a sync's read cannot see yet (changes committed but not applied by
// the projection, or in transactions still open) is its caller's to
// account for: it answers a syncTimestamp no later than the projection's
// horizon.
const SyncMargin int64 = 2000
