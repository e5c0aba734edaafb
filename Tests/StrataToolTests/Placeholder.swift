// Tests that run the built executables live beside this file.
