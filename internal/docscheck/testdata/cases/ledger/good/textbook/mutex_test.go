package textbook_test

// A fixture: the ledger check reads the Expected map's keys and nothing
// else of this file.
var variant = locktest.Variant{
	Name: "textbook",
	Expected: map[string]string{
		"BadInput":                  "accepts any path",
		"DoneOnLoss/SessionExpired": "Done never closes",
	},
}
