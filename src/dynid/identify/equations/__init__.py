"""From the recordings to the equations: the request, the recordings read and bridged, the equations prepared
once, and the identification problem a candidate draws its columns from."""
