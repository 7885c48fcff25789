// Package nvmltest holds test doubles for package nvml: three node
