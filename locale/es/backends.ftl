# Servidores de modelos y grupos de servidores.

backends-title = Servidores de modelos
backends-intro = Los servidores de modelos detrás de la pasarela, su capacidad y cómo se les transmite la prioridad de cada solicitud.
backend-priority-mode = Transmisión de la prioridad
backend-priority-auto = Automática
backend-priority-gateway = Solo en la pasarela
backend-priority-custom = Asignación manual
