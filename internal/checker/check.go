package checker

// Check checks everything added so far against the given fault windows and returns
// the result. It may be called more than once; Add and Restarted wait while it runs.
func (c *Checker) Check(windows []Window) Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Result{} // TODO: implement
}
