// The coordinator, contexts and container arrive here.
