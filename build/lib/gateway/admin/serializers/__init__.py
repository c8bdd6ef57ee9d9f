"""The admin API's input and output serializers, one module per resource."""
