// Package loyalty is the loyalty domain: one points account per identified
// user (earn, redeem, adjust, expire, rebalance), its stamp cards, and the
// stamp card definitions of an app. Every balance is explained by the
// account's events, so an auditor can replay it.
package loyalty
