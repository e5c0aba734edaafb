// Context tests arrive with the context.
