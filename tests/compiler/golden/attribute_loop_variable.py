class Counter:
    def __init__(self):
        self.count = 0

    def f(self, n):
        i = 0
        while i < n:
            self.count += i
            i += 1
        return self.count


f = Counter.f
