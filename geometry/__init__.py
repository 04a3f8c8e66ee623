"""Pure shapes and states in table millimetres: the base layer, no OpenCV, no pixels."""
