"""The control plane on Django: admin API views, serializers, services and selectors, output
shapes, activity store, usage report, consumers."""
