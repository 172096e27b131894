// Module CloudAssets — see DESIGN.md.
