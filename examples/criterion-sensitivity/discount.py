"""Order discounts, in cents: the example module for criterion sensitivity.

Members get 10% off an order of 10000 cents or more; any order over 5000 cents gets 250 off.
Nothing in this docstring is mutated: `10000 >= 5000` here is text, not code.
"""


def discount(total, member):
    """Returns the discount, in cents, on an order of `total` cents."""
    if total >= 10000 and member:  # the member tier starts AT 10000, inclusive
        return total // 10
    if total > 5000:  # strictly over 5000
        return 250
    return 0
