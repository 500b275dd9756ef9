package textbook_test

var variant = locktest.Variant{
	Expected: map[string]string{
		"BadInput":                  "accepts any path",
		"DoneOnLoss/SessionExpired": "Done never closes",
		"Revoke":                    "takes a request for a loss",
	},
}
