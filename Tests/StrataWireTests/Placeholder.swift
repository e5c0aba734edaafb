// Tests for the wire layer live beside this file.
