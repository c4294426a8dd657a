import math

import numpy as np


def helper(x):
    return x + 1


def f(x):
    y = helper(x)
    z = np.square(math.sqrt(4.0))
    return len([y, z]) + abs(x)
