"""Loaders for robot descriptions. ``load_urdf`` reads a URDF file or string into a Skeleton."""

from rigidiff.io.urdf import load_urdf

__all__ = ["load_urdf"]
