package rewrite

import "testing"

func TestIsAtomicAccessor(t *testing.T) {
	yes := []string{
		"_ZNKSt6atomicIbE4loadESt12memory_order",
		"_ZNSt6atomicIbE5storeEbSt12memory_order",
		"_ZNKSt13__atomic_baseIiE4loadESt12memory_order",
		"_ZNSt13__atomic_baseIiE5storeEiSt12memory_order",
		"_ZNKSt13__atomic_baseIiEcviEv",
		"_ZNSt13__atomic_baseIiEaSEi",
	}
	no := []string{
		"_ZNSt13__atomic_baseIiE9fetch_addEiSt12memory_order", // lock xadd: atomic already
		"_ZNSt6atomicIbEC2Eb", // constructor
		"_ZNKSt6vectorIiSaIiEE4sizeEv",
		"load",
		"_Z4loadv",
	}
	for _, n := range yes {
		if !isAtomicAccessor(n) {
			t.Errorf("isAtomicAccessor(%q) = false", n)
		}
	}
	for _, n := range no {
		if isAtomicAccessor(n) {
			t.Errorf("isAtomicAccessor(%q) = true", n)
		}
	}
}
