import CloudAssets
print("cloudassets: not yet implemented")
