"""Camera models and table calibration: pixels <-> table millimetres, at any height above the mat."""
