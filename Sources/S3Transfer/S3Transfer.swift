// Module S3Transfer — see DESIGN.md.
