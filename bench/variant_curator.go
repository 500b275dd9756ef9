package bench

// curator is Apache Curator's InterProcessMutex (5.4, Debian's
// libcurator-recipes-java), the lock the notes tell Java users to take,
// run by bench/peers/curator/LockDriver.java in a JVM of its own.
func init() {
	Register(Variant{
		Name:     "curator",
		Describe: "Curator InterProcessMutex (Java, driver process): sequential nodes, data watch on the predecessor, re-list after each wake-up",
		Driver:   curatorDriver,
	})
}
