// Module AssetStore — see DESIGN.md.
