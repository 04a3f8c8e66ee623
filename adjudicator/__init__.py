"""Rule engines: structured rulings from geometry states; never sees a pixel."""
