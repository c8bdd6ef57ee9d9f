"""What the gateway tells about itself: activity records and their writer, queue metrics and the
collector, the live queue."""
