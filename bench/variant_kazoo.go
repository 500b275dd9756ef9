package bench

// kazoo is kazoo's Lock (2.8, Debian's python3-kazoo), the lock Python
// programs take, run by bench/peers/kazoo/lock_driver.py in a python of
// its own, with its default lock patterns (only kazoo contenders on the
// path, as here).
func init() {
	Register(Variant{
		Name:     "kazoo",
		Describe: "kazoo Lock (Python, driver process): sequential nodes, data watch on the predecessor, re-list after each wake-up",
		Driver:   kazooDriver,
	})
}
