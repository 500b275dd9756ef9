package sequential

import "github.com/zklocks/zklocks/internal/lockq"

// PinGUID makes every acquisition use guid until the returned func is
// called. For tests that plant nodes carrying "our" GUID.
func PinGUID(guid string) (restore func()) { return lockq.PinGUID(guid) }
