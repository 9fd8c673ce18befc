#!/usr/bin/env python3
"""Not C: a Python script that happens to have a .c extension."""
import numpy as np


def blur(src):
    dst = src.copy()
    dst[1:-1] = (src[:-2] + src[1:-1] + src[2:]) / 3.0
    return dst


if __name__ == "__main__":
    print(blur(np.arange(10, dtype=np.float32)))
