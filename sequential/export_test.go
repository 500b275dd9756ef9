package sequential

// PinGUID makes every acquisition use guid until the returned func is
// called. For tests that plant nodes carrying "our" GUID.
func PinGUID(guid string) (restore func()) {
	old := newGUID
	newGUID = func() string { return guid }
	return func() { newGUID = old }
}
