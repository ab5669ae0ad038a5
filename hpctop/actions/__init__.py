"""Actions on jobs: requests as data, previews, and actuators that carry them out."""
