"""The PCD scoring model (moving here in the layers change); engine profiles live in `engines`."""
