print("ca-bench: not yet implemented")
